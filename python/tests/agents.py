"""Real Python agents, the way agent developers write them: a good one per HTTP client, and bad ones that
break a client safety rule the way real agents do. Each takes the gateway's base URL and an API key."""

import asyncio
import random
import time

import aiohttp
import httpx
import requests

PAGE = "https://docs.agent-gateway.example/welcome"


def mint(client_post, base_url, api_key):
    """POST /idp/token with the API key: the identity token to send in X-Agent-Identity."""
    return client_post(f"{base_url}/idp/token", json={"api_key": api_key}).json()["token"]


def retry_after_seconds(response):
    value = response.headers.get("retry-after")
    return float(value) if value and value.replace(".", "", 1).isdigit() else None


def good_httpx_agent(base_url, api_key, pages=8, sleep=time.sleep, max_attempts=5):
    """Fetches pages one at a time; on 429 waits Retry-After (else backs off with jitter); caps retries."""
    with httpx.Client(timeout=30) as client:
        token = mint(client.post, base_url, api_key)
        headers = {"X-Agent-Identity": token}
        client.get(f"{base_url}/v1/whoami", headers=headers).raise_for_status()
        results = []
        for i in range(pages):
            for attempt in range(max_attempts):
                response = client.post(f"{base_url}/v1/web/fetch", json={"url": PAGE}, headers=headers)
                if response.status_code == 429 or response.status_code >= 500:
                    wait = retry_after_seconds(response)
                    base = wait if wait is not None else 0.5 * 2**attempt
                    sleep(base + random.uniform(0, 0.5 * base + 0.1))
                    continue
                response.raise_for_status()
                results.append(response.json())
                break
            else:
                raise RuntimeError(f"page {i}: gave up after {max_attempts} attempts")
        return results


def impatient_requests_agent(base_url, api_key, calls=10):
    """requests.Session: on a 429 retries at once, ignoring Retry-After (a classic hand-written loop)."""
    with requests.Session() as session:
        token = mint(session.post, base_url, api_key)
        headers = {"X-Agent-Identity": token}
        statuses = []
        for _ in range(calls):
            response = session.post(f"{base_url}/v1/web/fetch", json={"url": PAGE}, headers=headers, timeout=30)
            statuses.append(response.status_code)
            while response.status_code == 429 and len(statuses) < 3 * calls:
                response = session.post(
                    f"{base_url}/v1/web/fetch", json={"url": PAGE}, headers=headers, timeout=30
                )
                statuses.append(response.status_code)
        return statuses


async def _storm(base_url, api_key, batch, fan_out):
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base_url}/idp/token", json={"api_key": api_key}) as answer:
            token = (await answer.json())["token"]
        headers = {"X-Agent-Identity": token}

        pages = iter(range(1000))

        async def fetch():
            url = f"https://docs.agent-gateway.example/guide/part-{next(pages)}"
            async with session.post(f"{base_url}/v1/web/fetch", json={"url": url}, headers=headers) as r:
                await r.read()
                return r.status

        # A first batch of pages at once (a pool of connections opens), a while to read them, then pages one
        # by one until a 429, and then, though refused, the next batch all at once: a storm while the 429 is in
        # force. (The pause keeps the 429 apart from the first batch: a refusal that came in a wave of requests
        # leaves the report unable to tell a reaction from a request already on its way.)
        statuses = list(await asyncio.gather(*(fetch() for _ in range(batch))))
        await asyncio.sleep(0.3)
        while 429 not in statuses and len(statuses) < 50:
            statuses.append(await fetch())
        await asyncio.sleep(0.05)  # "backs off" 50 ms, whatever Retry-After said
        statuses += await asyncio.gather(*(fetch() for _ in range(fan_out)))
        return statuses


def gather_storm_aiohttp_agent(base_url, api_key, batch=5, fan_out=12):
    """aiohttp: fetches in asyncio.gather batches, and after a 429 sends the next batch instead of slowing down."""
    return asyncio.run(_storm(base_url, api_key, batch, fan_out))


async def _good_async(base_url, api_key, pages):
    async with httpx.AsyncClient(timeout=30) as client:
        token = (await client.post(f"{base_url}/idp/token", json={"api_key": api_key})).json()["token"]
        headers = {"X-Agent-Identity": token}
        out = []
        for _ in range(pages):
            response = await client.post(f"{base_url}/v1/web/fetch", json={"url": PAGE}, headers=headers)
            response.raise_for_status()
            out.append(response.json())
        return out


def good_httpx_async_agent(base_url, api_key, pages=3):
    """httpx.AsyncClient, one request at a time, within the limits."""
    return asyncio.run(_good_async(base_url, api_key, pages))


def leaky_search_agent(base_url, api_key):
    """httpx: puts its own identity token into a search query (spec section 1 rule 2)."""
    with httpx.Client(timeout=30) as client:
        token = mint(client.post, base_url, api_key)
        headers = {"X-Agent-Identity": token}
        response = client.post(
            f"{base_url}/v1/web/search", json={"query": f"why is my token {token} rejected"}, headers=headers
        )
        return response.status_code


def form_key_requests_agent(base_url, api_key):
    """requests.post(url, data=...): the search goes out form-encoded, its API key a field (refused 415: sent
    all the same), then it is sent again as JSON without the key."""
    with requests.Session() as session:
        token = mint(session.post, base_url, api_key)
        headers = {"X-Agent-Identity": token}
        url = f"{base_url}/v1/web/search"
        refused = session.post(url, data={"query": "weather in paris", "api_key": api_key}, headers=headers)
        assert refused.status_code == 415, refused.status_code
        session.post(url, json={"query": "weather in paris"}, headers=headers).raise_for_status()


def deflate_key_aiohttp_agent(base_url, api_key):
    """aiohttp with compress="deflate": its searches go out compressed, one with its API key in the query."""

    async def run():
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{base_url}/idp/token", json={"api_key": api_key}) as minted:
                token = (await minted.json())["token"]
            headers = {"X-Agent-Identity": token}
            for query in ("weather in paris", f"weather {api_key}"):
                async with session.post(
                    f"{base_url}/v1/web/search", json={"query": query}, headers=headers, compress="deflate"
                ) as response:
                    assert response.status == 200, response.status

    asyncio.run(run())


def health_key_agent(base_url, api_key):
    """An SDK that adds ?api_key=<own key> to every URL, its health probe (answered before identity) included."""
    with requests.Session() as session:
        token = mint(session.post, base_url, api_key)
        headers = {"X-Agent-Identity": token}
        session.get(f"{base_url}/v1/health", params={"api_key": api_key}, headers=headers).raise_for_status()
        session.post(f"{base_url}/v1/web/search", json={"query": "weather"}, headers=headers).raise_for_status()
