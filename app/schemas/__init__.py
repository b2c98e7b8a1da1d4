"""Request (``XCreate``) and response (``XPublic``) models of the REST API."""
