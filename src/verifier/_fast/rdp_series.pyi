import numpy as np
import numpy.typing as npt

def log_series_product(
    log_a: npt.NDArray[np.float64],
    err_a: npt.NDArray[np.float64],
    log_b: npt.NDArray[np.float64],
    err_b: npt.NDArray[np.float64],
    out: npt.NDArray[np.float64],
    out_err: npt.NDArray[np.float64],
    scratch: npt.NDArray[np.float64],
) -> int: ...
def log_series_power(
    log_ta: npt.NDArray[np.float64],
    t: float,
    out: npt.NDArray[np.float64],
    out_err: npt.NDArray[np.float64],
    scratch: npt.NDArray[np.float64],
) -> int: ...
