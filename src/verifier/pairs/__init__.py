"""Dominating pairs (P, Q) = (R(*), R(⊥)) of one mechanism step, with exact δ(ε), ε(δ), Rényi
divergences, privacy-ratio moments and privacy-loss laws in both directions."""

from verifier.pairs.antipodal import AntipodalMixture, poisson_replace_one_step
from verifier.pairs.approx_dp import ApproxDP, ApproxDPComposition
from verifier.pairs.base import DominatingPair
from verifier.pairs.discrete_gaussian import DiscreteGaussian
from verifier.pairs.finite import DiscreteLaplace, DiscretePair, FinitePair, RandomizedResponse, UniformResponse
from verifier.pairs.finite_composition import FiniteComposition, SubsampledFinite
from verifier.pairs.gaussian import Gaussian
from verifier.pairs.laplace import Laplace
from verifier.pairs.laplace_antipodal import LaplaceAntipodal
from verifier.pairs.laplace_composition import LaplaceComposition
from verifier.pairs.subsampled import PoissonSubsampled
from verifier.pairs.substitution import SubstitutionSubsampled, replace_one_pair

__all__ = ["AntipodalMixture", "DominatingPair", "FinitePair", "DiscretePair", "RandomizedResponse", "Gaussian", "Laplace", "PoissonSubsampled", "SubstitutionSubsampled", "replace_one_pair", "poisson_replace_one_step", "ApproxDP", "ApproxDPComposition", "FiniteComposition", "SubsampledFinite", "LaplaceComposition", "UniformResponse", "DiscreteLaplace", "DiscreteGaussian"]
