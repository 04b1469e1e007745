import numpy as np
import numpy.typing as npt

def fft_inplace(
    re: npt.NDArray[np.float64] | npt.NDArray[np.longdouble],
    im: npt.NDArray[np.float64] | npt.NDArray[np.longdouble],
    tw_re: npt.NDArray[np.float64] | npt.NDArray[np.longdouble],
    tw_im: npt.NDArray[np.float64] | npt.NDArray[np.longdouble],
    inverse: bool,
) -> int: ...
def bit_reverse(
    re: npt.NDArray[np.float64] | npt.NDArray[np.longdouble],
    im: npt.NDArray[np.float64] | npt.NDArray[np.longdouble],
) -> int: ...
