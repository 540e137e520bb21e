"""A SOAP client no one here wrote: zeep builds it from the service's WSDL alone.

Usage: soap_client.py WSDL_URL FIRST_ID COUNT BATCH
Reads the records FIRST_ID .. FIRST_ID + COUNT - 1 with GetRecords, BATCH at a time, and prints each as one JSON line.
Two things zeep's values cannot say are taken from the envelope it received: CreationDate's text (Python's datetime holds
microseconds, the wire 100 ns), and whether a string it reads as None was NULL (i:nil) or empty (lxml gives an empty element
no text).
"""
import base64
import json
import struct
import sys

from zeep import Client
from zeep.plugins import HistoryPlugin

NAMESPACE = "{urn:integrationtasks:2014}"
NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"


def bits(value):
    return struct.unpack("<q", struct.pack("<d", value))[0]


def text(value, element):
    """A string as the wire had it: None only for an absent or nil element."""
    if element is None or element.get(NIL) == "true":
        return None
    return "" if value is None else value


def main(wsdl, first, count, batch):
    history = HistoryPlugin()
    client = Client(wsdl, plugins=[history])
    for start in range(first, first + count, batch):
        result = client.service.GetRecords(firstId=start, count=min(batch, first + count - start))
        records = result if isinstance(result, list) else (result.Record if result is not None else [])
        received = list(history.last_received["envelope"].iter(NAMESPACE + "Record"))
        if len(received) != len(records):
            raise SystemExit(f"zeep read {len(records)} records from an envelope of {len(received)}")
        for record, element in zip(records, received):
            field = lambda name: element.find(NAMESPACE + name)
            print(json.dumps({
                "id": record.Id,
                "desc": text(record.Desc, field("Desc")),
                "valueBits": bits(record.Value),
                "creationDate": record.CreationDate.isoformat(timespec="microseconds"),
                "creationDateText": field("CreationDate").text,
                "stringField1": text(record.StringField1, field("StringField1")),
                "stringField2": text(record.StringField2, field("StringField2")),
                "payload": None if record.Payload is None else base64.b64encode(record.Payload).decode("ascii"),
                "payloadText": text(record.PayloadText, field("PayloadText")),
            }, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
