"""One module per part of the console; each calls services inside one transaction and renders a page."""
