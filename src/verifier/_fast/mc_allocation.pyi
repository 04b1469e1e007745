import numpy as np
import numpy.typing as npt

def standard_normals(out: npt.NDArray[np.float64], state: npt.NDArray[np.uint64]) -> int: ...
def gaussian_allocation_losses(
    out: npt.NDArray[np.float64],
    t: int,
    a: float,
    first_shift: float,
    offset: float,
    sign: float,
    state: npt.NDArray[np.uint64],
) -> int: ...
def mean_ratio_losses(coordinate_losses: npt.NDArray[np.float64], out: npt.NDArray[np.float64]) -> int: ...
def hockey_stick_moments(
    losses: npt.NDArray[np.float64],
    epsilons: npt.NDArray[np.float64],
    out_sum: npt.NDArray[np.float64],
    out_sum_squares: npt.NDArray[np.float64],
) -> int: ...
