"""The committed instances, shipped with sensaopt as package data: ``sensaopt.load_instance("tiny-8gpu")``,
``sensaopt solve tiny-8gpu`` (names: :func:`sensaopt.datasets.instance_names`)."""
