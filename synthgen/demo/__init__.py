"""`synthgen demo` and the scripted stand-in server it runs, fenced off from the pipeline.

No pipeline module imports this package (tests/test_import_graph.py holds that).
"""
