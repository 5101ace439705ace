"""Qt front end. The only package allowed to import Qt widgets."""
