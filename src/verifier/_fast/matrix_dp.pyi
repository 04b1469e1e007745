import numpy as np
import numpy.typing as npt

def matrix_log_sums(
    band: npt.NDArray[np.float64],
    glue: npt.NDArray[np.float64],
    lfact: npt.NDArray[np.float64],
    amax: int,
    out: npt.NDArray[np.float64],
    info: npt.NDArray[np.float64],
    states: npt.NDArray[np.float64],
    scratch: npt.NDArray[np.float64],
) -> int: ...
