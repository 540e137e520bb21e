"""A plain HTTP client no one here wrote: Python's urllib and json, its request made from the OpenAPI document alone.

Usage: openapi_client.py BASE_URL FIRST_ID COUNT BATCH
Finds the GET operation "GetRecords" and its query parameters in BASE_URL/openapi/v1.json, reads the records FIRST_ID ..
FIRST_ID + COUNT - 1, BATCH at a time, and prints each as one JSON line.
"""
import base64
import json
import struct
import sys
import urllib.parse
import urllib.request


def number(value, name):
    # bool is an int in Python; the contract's numbers are JSON numbers, never strings.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SystemExit(f"{name} is {value!r}, not a JSON number")
    return value


def bits(value):
    return struct.unpack("<q", struct.pack("<d", float(number(value, "value"))))[0]


def get_json(url):
    with urllib.request.urlopen(url, timeout=60) as response:
        if response.status != 200:
            raise SystemExit(f"{url}: HTTP {response.status}")
        return json.load(response)


def main(base, first, count, batch):
    document = get_json(base + "/openapi/v1.json")
    path, operation = next((path, item["get"]) for path, item in document["paths"].items()
                           if item.get("get", {}).get("operationId") == "GetRecords")
    names = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
    if names != {"firstId", "count"}:
        raise SystemExit(f"GetRecords takes {sorted(names)}")
    for start in range(first, first + count, batch):
        query = urllib.parse.urlencode({"firstId": start, "count": min(batch, first + count - start)})
        for record in get_json(f"{base}{path}?{query}"):
            payload = record.get("payload")
            print(json.dumps({
                "id": number(record["id"], "id"),
                "desc": record["desc"],
                "valueBits": bits(record["value"]),
                "creationDateText": record["creationDate"],
                "stringField1": record["stringField1"],
                "stringField2": record["stringField2"],
                "payload": None if payload is None else base64.b64encode(base64.b64decode(payload, validate=True)).decode("ascii"),
                "payloadText": record.get("payloadText"),
            }, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
