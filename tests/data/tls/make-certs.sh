#!/usr/bin/env bash
# Regenerates the test CA and the fake upstream's certificate (127.0.0.1 and localhost).
# Valid for 100 years so the tests never expire; never use these anywhere else.
set -euo pipefail
cd "$(dirname "$0")"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 36500 \
  -subj "/CN=contextgate test CA" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
  -subj "/CN=127.0.0.1" 2>/dev/null
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
  -days 36500 -extfile <(printf "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth") 2>/dev/null
# A second, unrelated CA: a client trusting it must reject the server above.
openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.crt -days 36500 \
  -subj "/CN=contextgate unrelated CA" 2>/dev/null
rm -f server.csr ca.srl other-ca.key
