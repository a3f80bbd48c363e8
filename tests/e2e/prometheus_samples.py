"""Reads a Prometheus text exposition on stdin with the official client's parser
(python3-prometheus-client) and prints its samples as JSON: [{family, type, name, labels, value}].
Any line the parser refuses makes it exit non-zero with the reason."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        samples.append({"family": family.name, "type": family.type, "name": s.name,
                        "labels": s.labels, "value": s.value})
json.dump(samples, sys.stdout)
