"""The console: a blinded web app on the operator's phone, over a locked study's store.

:func:`evalsim.study.web.app.create_app` builds the app (Starlette, run under uvicorn by
``evalsim study serve``); :class:`evalsim.study.web.console.ConsoleStudy` is what its routes
call, usable without the web framework. Both ship in the ``bench`` extra
(``pip install 'evalsim[bench]'``): the core install never imports this package's app.
"""
