"""The Stills API client: turn a video link into still frames.

    from stills import Stills
    client = Stills()  # STILLS_API_KEY, STILLS_BASE_URL
    job = client.jobs.create({"url": "https://example.com/video.mp4", "count": 6}, wait=True)
"""

from ._client import PRODUCTION_BASE_URL, Stills
from ._errors import (
    AuthenticationError,
    InsufficientBalanceError,
    InvalidRequestError,
    NotFoundError,
    RateLimitError,
    ServerError,
    StillsConnectionError,
    StillsError,
    StillsTimeoutError,
    WebhookVerificationError,
)
from ._types import (
    AnimatedRequest,
    Batch,
    BatchCounts,
    BatchItem,
    BatchList,
    BatchSummary,
    BudgetRequest,
    CreateBatchRequest,
    CreateJobRequest,
    DemoJob,
    DownloadedFile,
    ErrorData,
    Frame,
    FrameSlide,
    FrameText,
    Job,
    JobBudget,
    JobError,
    JobList,
    JobOptions,
    Problem,
    Usage,
    WebhookEvent,
)
from ._version import VERSION

__version__ = VERSION

__all__ = [
    "PRODUCTION_BASE_URL",
    "VERSION",
    "AnimatedRequest",
    "Batch",
    "BatchCounts",
    "BatchItem",
    "BatchList",
    "BatchSummary",
    "BudgetRequest",
    "AuthenticationError",
    "CreateBatchRequest",
    "CreateJobRequest",
    "DemoJob",
    "DownloadedFile",
    "ErrorData",
    "Frame",
    "FrameSlide",
    "FrameText",
    "JobBudget",
    "InsufficientBalanceError",
    "InvalidRequestError",
    "Job",
    "JobError",
    "JobList",
    "JobOptions",
    "NotFoundError",
    "Problem",
    "RateLimitError",
    "ServerError",
    "Stills",
    "StillsConnectionError",
    "StillsError",
    "StillsTimeoutError",
    "Usage",
    "WebhookEvent",
    "WebhookVerificationError",
]
