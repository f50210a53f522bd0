"""A thin client of evald's REST API (standard library only).

The operations and bodies are those of the OpenAPI document the daemon serves at /openapi.json
(`evald openapi` prints it): bodies are protobuf's JSON mapping with the .proto field names.

    from evald_client import Client
    evald = Client("http://127.0.0.1:8080", token="...")
    run = evald.create_run({"dataset": "builtin"}, samples_jsonl=open("samples.jsonl").read())
    run = evald.wait(run["id"])
    print(run["summary"]["pass_at_k"])
"""

import json
import time
import urllib.error
import urllib.parse
import urllib.request

TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")


class EvaldError(Exception):
    """An error answer: its HTTP status and evald's message."""

    def __init__(self, status, message):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class Client:
    def __init__(self, base_url, token=None, timeout=60):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    # -- transport ---------------------------------------------------------------------------

    def _request(self, method, path, query=None, body=None, raw=False):
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            try:
                message = json.loads(text).get("error", text)
            except ValueError:
                message = text
            raise EvaldError(e.code, message) from None
        return text if raw else json.loads(text)

    # -- operations --------------------------------------------------------------------------

    def openapi(self):
        return self._request("GET", "/openapi.json")

    def create_checkpoint(self, checkpoint):
        return self._request("POST", "/v1/checkpoints", body=checkpoint)

    def checkpoints(self):
        return self._request("GET", "/v1/checkpoints").get("checkpoints", [])

    def delete_checkpoint(self, checkpoint_id):
        return self._request("DELETE", "/v1/checkpoints/" + checkpoint_id)

    def create_run(self, spec, samples_jsonl=None):
        body = {"spec": spec}
        if samples_jsonl is not None:
            body["samples_jsonl"] = samples_jsonl
        return self._request("POST", "/v1/runs", body=body)

    def run(self, run_id):
        return self._request("GET", "/v1/runs/" + run_id)

    def runs(self, checkpoint=None, dataset=None, label=None):
        query = {"checkpoint": checkpoint, "dataset": dataset, "label": label}
        return self._request("GET", "/v1/runs", query=query).get("runs", [])

    def wait(self, run_id, timeout=600, poll=0.5):
        """Polls until the run ends; returns it (whatever its end), or raises TimeoutError."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.run(run_id)
            if run.get("state") in TERMINAL:
                return run
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} still {run.get('state')} after {timeout} s")
            time.sleep(poll)

    def cancel(self, run_id, reason=""):
        return self._request("POST", f"/v1/runs/{run_id}/cancel", body={"reason": reason})

    def resume(self, run_id):
        return self._request("POST", f"/v1/runs/{run_id}/resume", body={})

    def delete_run(self, run_id):
        return self._request("DELETE", "/v1/runs/" + run_id)

    def samples(self, run_id, page_size=100):
        """Every sample of the run, page by page."""
        token = None
        while True:
            page = self._request("GET", f"/v1/runs/{run_id}/samples",
                                 query={"page_size": page_size, "page_token": token})
            yield from page.get("samples", [])
            token = page.get("next_page_token")
            if not token:
                return

    def report(self, run_id):
        return self._request("GET", f"/v1/runs/{run_id}/report")

    def compare(self, a, b, metric=None):
        return self._request("GET", "/v1/compare", query={"a": a, "b": b, "metric": metric})

    def leaderboard(self, format="json", dataset=None, label=None):
        query = {"format": format, "dataset": dataset, "label": label}
        return self._request("GET", "/v1/leaderboard", query=query, raw=format != "json")

    def plan(self, request):
        return self._request("POST", "/v1/plan", body=request)
