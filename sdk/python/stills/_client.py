"""The client: Stills(api_key=..., base_url=...), with the environment's defaults."""

from __future__ import annotations

import os
import shutil
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterator, List, Optional, cast

from ._errors import StillsConnectionError, StillsTimeoutError, error_from_answer
from ._transport import RetryPolicy, Transport
from ._types import (
    FINAL_STATUSES,
    AnimatedRequest,
    Batch,
    BatchItem,
    BatchList,
    BatchSummary,
    CreateBatchRequest,
    CreateJobRequest,
    DemoJob,
    DownloadedFile,
    Job,
    JobList,
    Usage,
)
from ._webhooks import Webhooks

PRODUCTION_BASE_URL = "https://api.stills.dev/v1"
DEFAULT_WAIT = 600.0

ProgressCallback = Callable[[Job], None]


def _paginate(read_page: Callable[[int], Any], skip: int) -> Iterator[Any]:
    """Each page from `skip` on (read_page(skip) answers {total, data, ...}) until none is left."""
    while True:
        page = read_page(skip)
        yield page
        skip += len(page["data"])
        if not page["data"] or skip >= page["total"]:
            return


def _poll(
    first: Any, read: Callable[[], Any], ended: Callable[[Any], bool], timeout: float,
    interval: float, noun: str,
) -> Any:
    """`first`, then `read()` every `interval` seconds until `ended` says so; StillsTimeoutError
    (holding the last state seen) once `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    state = first
    while not ended(state):
        if time.monotonic() >= deadline:
            raise StillsTimeoutError(f"{noun} {state['id']} was still {state['status']}", state)
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
        state = read()
    return state


class Jobs:
    def __init__(self, transport: Transport):
        self._transport = transport

    def create(
        self,
        body: CreateJobRequest,
        *,
        wait: bool = False,
        timeout: float = DEFAULT_WAIT,
        on_progress: Optional[ProgressCallback] = None,
        idempotency_key: Optional[str] = None,
    ) -> Job:
        """Creates a job; with wait=True, returns it once it has ended."""
        job = cast(
            Job,
            self._transport.request(
                "POST",
                "/jobs",
                body=body,
                # The server's own wait (up to 50 s) saves polling; with on_progress we poll.
                query={"wait": True if wait and on_progress is None else None},
                headers={"idempotency-key": idempotency_key or str(uuid.uuid4())},
                idempotent=True,
            ),
        )
        return self._settle(job, timeout, on_progress) if wait else job

    def get(self, job_id: str, *, wait: bool = False, timeout: float = DEFAULT_WAIT) -> Job:
        """Reads a job; with wait=True, returns it once it has ended."""
        if wait:
            return self.wait_for(job_id, timeout=timeout)
        return self._read(job_id, False)

    def wait_for(
        self,
        job_id: str,
        *,
        timeout: float = DEFAULT_WAIT,
        on_progress: Optional[ProgressCallback] = None,
        poll_interval: float = 1.0,
    ) -> Job:
        """Returns the job once it has ended (a failed job is returned, not raised).

        Raises StillsTimeoutError when `timeout` seconds pass first.
        """
        job = self._read(job_id, on_progress is None)
        return self._settle(job, timeout, on_progress, poll_interval)

    def pages(
        self, *, limit: Optional[int] = None, status: Optional[str] = None, skip: int = 0
    ) -> Iterator[JobList]:
        """Each page of the list, as the API returns it."""

        def read(at: int) -> JobList:
            query = {"limit": limit, "skip": at, "status": status}
            return cast(JobList, self._transport.request("GET", "/jobs", query=query))

        return _paginate(read, skip)

    def list(
        self, *, limit: Optional[int] = None, status: Optional[str] = None, skip: int = 0
    ) -> Iterator[Job]:
        """Every job, newest first, across every page (`limit` is the page size)."""
        for page in self.pages(limit=limit, status=status, skip=skip):
            yield from page["data"]

    def _read(self, job_id: str, wait: bool) -> Job:
        path = "/jobs/" + urllib.request.quote(job_id, safe="")
        return cast(Job, self._transport.request("GET", path, query={"wait": True if wait else None}))

    def _settle(
        self,
        job: Job,
        timeout: float,
        on_progress: Optional[ProgressCallback],
        poll_interval: float = 1.0,
    ) -> Job:
        deadline = time.monotonic() + timeout
        if on_progress:
            on_progress(job)
        while job["status"] not in FINAL_STATUSES:
            if time.monotonic() >= deadline:
                raise StillsTimeoutError(f"job {job['id']} was still {job['status']}", job)
            if on_progress:
                time.sleep(min(poll_interval, max(0.0, deadline - time.monotonic())))
                job = self._read(job["id"], False)
                on_progress(job)
            else:
                job = self._read(job["id"], True)
        return job


class Batches:
    """Many links, one job each, with the same options (guide: /docs/batches)."""

    def __init__(self, transport: Transport):
        self._transport = transport

    def create(
        self,
        body: CreateBatchRequest,
        *,
        wait: bool = False,
        timeout: float = DEFAULT_WAIT,
        poll_interval: float = 2.0,
        idempotency_key: Optional[str] = None,
    ) -> Batch:
        """Creates a batch (one job per link of `urls`, or per video of the playlist `url`);
        with wait=True, returns it once every item has ended."""
        batch = cast(
            Batch,
            self._transport.request(
                "POST",
                "/batches",
                body=body,
                headers={"idempotency-key": idempotency_key or str(uuid.uuid4())},
                idempotent=True,
            ),
        )
        if not wait:
            return batch
        return self._settle(batch, timeout, poll_interval)

    def get(self, batch_id: str, *, limit: Optional[int] = None, skip: int = 0) -> Batch:
        """Reads a batch with a page of its items (`limit` 1-100, default 100)."""
        path = "/batches/" + urllib.request.quote(batch_id, safe="")
        query = {"limit": limit, "skip": skip or None}
        return cast(Batch, self._transport.request("GET", path, query=query))

    def wait_for(
        self, batch_id: str, *, timeout: float = DEFAULT_WAIT, poll_interval: float = 2.0
    ) -> Batch:
        """Returns the batch once every item has ended (failed items included, not raised).

        Raises StillsTimeoutError when `timeout` seconds pass first.
        """
        return self._settle(self.get(batch_id), timeout, poll_interval)

    def _settle(self, batch: Batch, timeout: float, poll_interval: float) -> Batch:
        return cast(
            Batch,
            _poll(
                batch,
                lambda: self.get(batch["id"]),
                lambda b: b["status"] == "completed",
                timeout,
                poll_interval,
                "batch",
            ),
        )

    def items(self, batch_id: str, *, limit: Optional[int] = None) -> Iterator[BatchItem]:
        """Every item of a batch, in the order of its links, across every page."""
        for page in _paginate(lambda at: self.get(batch_id, limit=limit, skip=at)["items"], 0):
            yield from page["data"]

    def pages(self, *, limit: Optional[int] = None, skip: int = 0) -> Iterator[BatchList]:
        """Each page of the list of batches, as the API returns it."""

        def read(at: int) -> BatchList:
            query = {"limit": limit, "skip": at}
            return cast(BatchList, self._transport.request("GET", "/batches", query=query))

        return _paginate(read, skip)

    def list(self, *, limit: Optional[int] = None, skip: int = 0) -> Iterator[BatchSummary]:
        """Every batch, newest first, across every page (rows carry counts, not items)."""
        for page in self.pages(limit=limit, skip=skip):
            yield from page["data"]


class Demo:
    def __init__(self, transport: Transport):
        self._transport = transport

    def create(
        self,
        url: str,
        *,
        animated: Optional[AnimatedRequest] = None,
        wait: bool = False,
        timeout: float = 300.0,
    ) -> DemoJob:
        """Starts the free six-frame preview (no key), with `animated` a moving one beside it.
        Sent once: never repeated on a 5xx."""
        body: Dict[str, Any] = {"url": url}
        if animated is not None:
            body["animated"] = animated
        demo = cast(DemoJob, self._transport.request("POST", "/demo", body=body))
        return self._settle(demo, timeout) if wait else demo

    def get(self, demo_id: str, *, wait: bool = False, timeout: float = 300.0) -> DemoJob:
        demo = self._read(demo_id)
        return self._settle(demo, timeout) if wait else demo

    def _read(self, demo_id: str) -> DemoJob:
        path = "/demo/" + urllib.request.quote(demo_id, safe="")
        return cast(DemoJob, self._transport.request("GET", path))

    def _settle(self, demo: DemoJob, timeout: float) -> DemoJob:
        return cast(
            DemoJob,
            _poll(
                demo,
                lambda: self._read(demo["id"]),
                lambda d: d["status"] in FINAL_STATUSES,
                timeout,
                1.0,
                "demo",
            ),
        )


class Frames:
    def download(self, job: Job, directory: str, *, concurrency: int = 4) -> List[DownloadedFile]:
        """Writes each frame with a URL into `directory` as frame-0001.jpg, ... (index order).

        At most `concurrency` at once; each file is written under a temporary name and renamed
        when whole. The API key is never sent to the signed file URLs.
        """
        os.makedirs(directory, exist_ok=True)
        frames = [f for f in job["frames"] if f["status"] == "ok" and f["url"]]
        width = max(4, len(str(len(job["frames"]))))
        extension = job.get("options", {}).get("format") or "jpg"

        def save(frame: Dict[str, Any]) -> DownloadedFile:
            path = os.path.join(directory, f"frame-{frame['index']:0{width}d}.{extension}")
            size = _save(frame["url"], path)
            return {"index": frame["index"], "timestamp": frame["timestamp"], "path": path, "bytes": size}

        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            return list(pool.map(save, frames))


def _save(url: str, path: str, attempts: int = 3) -> int:
    for attempt in range(1, attempts + 1):
        partial = path + ".part"
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
                shutil.copyfileobj(response, out)
            os.replace(partial, path)
            return os.path.getsize(path)
        except urllib.error.HTTPError as answer:
            if os.path.exists(partial):
                os.remove(partial)
            if answer.code < 500 or attempt == attempts:
                raise error_from_answer(
                    answer.code, answer.read().decode(errors="replace"), dict(answer.headers)
                ) from None
        except OSError as failure:
            if os.path.exists(partial):
                os.remove(partial)
            if attempt == attempts:
                raise StillsConnectionError(f"GET {url} got no answer: {failure}") from failure
        time.sleep(0.5 * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


class Stills:
    """The Stills API.

    api_key defaults to STILLS_API_KEY; base_url (ending in /v1) to STILLS_BASE_URL, then to
    production. max_retries=0 turns retries off; timeout is per attempt, in seconds.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        max_retries: int = 3,
        retry: Optional[RetryPolicy] = None,
        timeout: float = 75.0,
        headers: Optional[Dict[str, str]] = None,
    ):
        self.base_url = (base_url or os.environ.get("STILLS_BASE_URL") or PRODUCTION_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("STILLS_API_KEY")
        self._transport = Transport(
            key, self.base_url, retry or RetryPolicy(max_retries=max_retries), timeout, headers
        )
        self.jobs = Jobs(self._transport)
        self.batches = Batches(self._transport)
        self.demo = Demo(self._transport)
        self.frames = Frames()
        self.webhooks = Webhooks()

    def usage(self) -> Usage:
        """Plan, credits, limits and this period's usage."""
        return cast(Usage, self._transport.request("GET", "/usage"))

    def pricing(self) -> Dict[str, Any]:
        """Plans and credit pricing (no key needed)."""
        return cast(Dict[str, Any], self._transport.request("GET", "/pricing"))
