"""The API's shapes as typed dictionaries (the served OpenAPI document's schemas)."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

# Optional keys are declared in a `total=False` subclass (NotRequired needs Python 3.11).

JobStatus = Literal["queued", "processing", "completed", "failed", "expired"]
FINAL_STATUSES = ("completed", "failed", "expired")


class JobError(TypedDict):
    name: str
    message: str
    userMessage: str


class _FrameFields(TypedDict):
    index: int
    timestamp: float
    status: Literal["ok", "error"]
    url: Optional[str]
    error: Optional[str]


class FrameText(TypedDict):
    """With text: the text read on the frame (OCR)."""

    content: str
    confidence: float
    language: str


class FrameSlide(TypedDict):
    """mode "slides": when the frame's slide is on screen ([start, end), seconds) and the
    index of the frame of its first showing when it is shown again (else None)."""

    start: float
    end: float
    repeat_of: Optional[int]


class Frame(_FrameFields, total=False):
    pts: Optional[float]
    scene_score: Optional[float]
    # mode "best": 0-1, and its parts (sharpness, exposure, contrast, colourfulness, interest).
    score: Optional[float]
    score_parts: Optional[Dict[str, float]]
    moved_to: Optional[float]
    moved_reason: Optional[str]
    caption: Optional[str]
    # With text: what was read on the frame; None when the frame failed.
    text: Optional[FrameText]
    # mode "slides": the slide's span and the frame it repeats.
    slide: Optional[FrameSlide]
    # mode "live": when the frame was on air (ISO 8601), and "program_date_time" or "received".
    captured_at: Optional[str]
    captured_at_source: Optional[Literal["program_date_time", "received"]]


class _JobFields(TypedDict):
    id: str
    object: Literal["job"]
    status: JobStatus
    url: str
    platform: str
    options: Dict[str, Any]
    duration_seconds: Optional[float]
    frames_count: Optional[int]
    frames_failed: int
    credits_charged: Optional[int]
    width: Optional[int]
    height: Optional[int]
    frames: List[Frame]
    zip_url: Optional[str]
    zip_bytes: Optional[int]
    requested_resolution: Optional[int]
    delivered_resolution: Optional[int]
    resolution_note: Optional[str]
    notice: str
    error: Optional[JobError]
    created_at: str
    started_at: Optional[str]
    completed_at: Optional[str]
    expires_at: Optional[str]


class JobBudget(TypedDict):
    """With a token budget: what it chose, measured on the delivered frames (None until done)."""

    tokens: int
    model: Literal["claude", "gpt", "gemini", "generic"]
    tokens_estimated: Optional[int]
    per_frame: Optional[int]
    frames: Optional[int]
    width: Optional[int]
    height: Optional[int]


class Job(_JobFields, total=False):
    budget: Optional[JobBudget]
    video: Optional[Dict[str, Any]]
    captions: Optional[Dict[str, Any]]
    storyboard: Optional[Dict[str, Any]]
    # The moving preview: url, bytes, frames, width, height, format, start, duration, fps.
    animated: Optional[Dict[str, Any]]
    # Whatever else the API adds (progress, ...) is passed through as it comes.


class JobList(TypedDict):
    total: int
    limit: int
    skip: int
    data: List[Job]


class _DemoJobFields(TypedDict):
    id: str
    object: Literal["demo_job"]
    status: JobStatus
    platform: str
    duration_seconds: Optional[float]
    frames_count: Optional[int]
    frames_failed: int
    width: Optional[int]
    height: Optional[int]
    frames: List[Frame]
    error: Optional[JobError]
    created_at: str
    completed_at: Optional[str]
    expires_at: Optional[str]


class DemoJob(_DemoJobFields, total=False):
    allowance: Dict[str, Any]
    animated: Optional[Dict[str, Any]]


class _Credits(TypedDict):
    available: int
    plan: int
    pack: int
    monthly_allowance: int


class _Limits(TypedDict):
    max_video_minutes: int
    max_frames_per_job: int
    max_width: int
    retention_days: int
    max_active_jobs: int
    requests_per_minute: int


class Usage(TypedDict):
    object: Literal["usage"]
    plan: Literal["free", "starter", "pro", "scale"]
    credits: _Credits
    period: Dict[str, Optional[str]]
    subscription: Optional[Dict[str, Any]]
    limits: _Limits
    this_period: Dict[str, Any]
    recent_ledger: List[Dict[str, Any]]


class AnimatedRequest(TypedDict, total=False):
    start: float
    duration: float
    fps: int
    width: int
    format: Literal["webp", "gif"]


class BudgetRequest(TypedDict):
    tokens: int
    model: Literal["claude", "gpt", "gemini", "generic"]


class JobOptions(TypedDict, total=False):
    """A job's options: what a job request and a batch's items take besides the link."""

    mode: Literal[
        "interval", "count", "timestamps", "scenes", "keyframes", "best", "slides", "live"
    ]
    every: float
    # mode "live" with every: stream seconds to watch, at most 600.
    duration: float
    count: int
    timestamps: List[float]
    start: float
    end: float
    format: Literal["jpg", "png", "webp"]
    resolution: Union[str, int]
    max_width: int
    output: Literal["urls", "zip", "both"]
    webhook_url: str
    sensitivity: float
    skip: List[Literal["black", "blurry", "duplicate"]]
    storyboard: bool
    captions: bool
    captions_language: str
    text: bool
    text_languages: List[str]
    animated: AnimatedRequest
    budget: BudgetRequest


class CreateJobRequest(JobOptions, total=False):
    url: str


class CreateBatchRequest(JobOptions, total=False):
    """urls (a list of links, one job each) or url (one playlist or channel link), not both."""

    urls: List[str]
    url: str


BatchStatus = Literal["queued", "running", "completed"]
BatchItemStatus = Literal["pending", "queued", "processing", "completed", "failed", "expired"]


class BatchItem(TypedDict):
    index: int
    url: str
    status: BatchItemStatus
    job_id: Optional[str]
    error: Optional[JobError]


class BatchCounts(TypedDict):
    total: int
    pending: int
    queued: int
    processing: int
    completed: int
    failed: int
    expired: int


class BatchPlaylist(TypedDict):
    url: str
    title: Optional[str]
    items: int
    truncated: bool
    note: Optional[str]


class BatchSummary(TypedDict):
    id: str
    object: Literal["batch"]
    status: BatchStatus
    options: Dict[str, Any]
    counts: BatchCounts
    credits_charged: int
    playlist: Optional[BatchPlaylist]
    created_at: str
    completed_at: Optional[str]


class BatchItemPage(TypedDict):
    total: int
    limit: int
    skip: int
    data: List[BatchItem]


class Batch(BatchSummary):
    items: BatchItemPage


class BatchList(TypedDict):
    total: int
    limit: int
    skip: int
    data: List[BatchSummary]


class Problem(TypedDict):
    param: Optional[str]
    message: str


class _ErrorDataFields(TypedDict):
    name: str
    userMessage: str
    errors: List[Problem]
    request_id: Optional[str]
    doc_url: str


class ErrorData(_ErrorDataFields, total=False):
    reason: Literal["malformed", "invalid"]


class WebhookEvent(TypedDict):
    type: Literal["job.completed", "job.failed", "batch.completed", "webhook.test"]
    timestamp: str
    # The job for job.*, the batch without its items for batch.completed, and for the
    # dashboard's webhook.test {"object": "webhook_test", "id", "message"}.
    data: Union[Job, BatchSummary, Dict[str, Any]]


class DownloadedFile(TypedDict):
    index: int
    timestamp: float
    path: str
    bytes: int
