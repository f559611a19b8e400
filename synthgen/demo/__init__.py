"""`synthgen demo` and the scripted stand-in server it runs; fenced off: no pipeline module imports this package."""
