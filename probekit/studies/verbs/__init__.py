"""The verbs study: its parameters (``params``), its run (``study``), claims and lab, one package."""
