"""`python -m rooflinec` runs the command line."""

from rooflinec.cli.main import console

if __name__ == "__main__":
    console()
