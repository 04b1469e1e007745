import numpy as np
import numpy.typing as npt

def hockey_stick_sum(
    losses: npt.NDArray[np.float64],
    probs: npt.NDArray[np.float64],
    epsilons: npt.NDArray[np.float64],
    out_sum: npt.NDArray[np.float64],
    out_error: npt.NDArray[np.float64],
) -> int: ...
