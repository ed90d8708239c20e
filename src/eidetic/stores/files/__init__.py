"""The files backend: records as markdown files in a folder, with a derived index beside them."""
