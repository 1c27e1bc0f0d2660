"""The one error of batch prediction that a user fixes by changing the input
or the options (the commands print it as one line)."""


class PredictError(ValueError):
    """The run cannot go on: a bad row (the message names file and line), or
    inputs, options and files that do not fit together."""


__all__ = ["PredictError"]
