"""Privacy core: calibration, mechanisms, per-fit ledger, cross-fit accountant, report, audit."""

from dpstats.privacy.accountant import PrivacyAccountant, Spend
from dpstats.privacy.calibration import gaussian_delta, gaussian_epsilon, gaussian_mu, gaussian_sigma, split_mu
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.report import PrivacyReport

__all__ = [
    "PrivacyAccountant", "Spend", "PrivacyLedger", "PrivacyStep", "PrivacyReport",
    "gaussian_delta", "gaussian_epsilon", "gaussian_mu", "gaussian_sigma", "split_mu",
]
