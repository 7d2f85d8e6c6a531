"""Loaders of the real probe releases (annotation files and their images) and the shared image downloader."""
