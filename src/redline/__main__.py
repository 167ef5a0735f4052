"""`python -m redline` runs the command line."""

from redline.cli.main import main

# Guarded: a process `multiprocessing` spawns from this one imports this module again, as `__mp_main__`.
if __name__ == "__main__":
    main()
