"""The app's Qt-free part: the document and what it holds, comparisons, tuning history, the
error colour scale, exports and the headless runs, and the 3D view's geometry (camera,
picking, skeleton mesh, up axis, palette). Nothing here imports Qt or OpenGL, so the CLI,
the tests and the benches use the very code the window draws with."""
