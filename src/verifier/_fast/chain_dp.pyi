import numpy as np
import numpy.typing as npt

def chain_step(
    mode: int,
    absorb: int,
    mass: npt.NDArray[np.float64],
    moment: npt.NDArray[np.float64],
    bmass: npt.NDArray[np.float64],
    bsum: npt.NDArray[np.float64],
    incr: npt.NDArray[np.float64],
    weight: npt.NDArray[np.float64],
    h: float,
    omass: npt.NDArray[np.float64],
    omoment: npt.NDArray[np.float64],
    obmass: npt.NDArray[np.float64],
    obsum: npt.NDArray[np.float64],
) -> int: ...
