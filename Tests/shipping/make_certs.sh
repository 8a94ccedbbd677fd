#!/bin/sh
# make_certs.sh DIR — the TLS material of the ship tests, made with openssl (EC P-256 keys: fast):
#   DIR/ca.pem, ca.key          a test CA (CN=crashwatch test CA)
#   DIR/server.pem, server.key  a server certificate for 127.0.0.1 and localhost (subjectAltName), signed by the CA
#   DIR/client.pem, client.key  a client certificate (CN=crashwatch test client, clientAuth), signed by the CA
#   DIR/other-ca.pem            an unrelated CA, for "untrusted" cases
# Keys are mode 0600. Everything is valid for 2 days from now. Exits non-zero when openssl fails.
set -eu
dir=${1:?usage: make_certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
umask 077

key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }

key ca.key
openssl req -x509 -new -key ca.key -sha256 -days 2 -subj "/CN=crashwatch test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out ca.pem 2>/dev/null

key other-ca.key
openssl req -x509 -new -key other-ca.key -sha256 -days 2 -subj "/CN=unrelated test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out other-ca.pem 2>/dev/null

sign() { # sign NAME SUBJECT EXTENSIONS
    key "$1.key"
    openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
    printf '%s\n' "$3" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -sha256 -days 2 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}

sign server "/CN=localhost" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"

sign client "/CN=crashwatch test client" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"

chmod 0644 ca.pem other-ca.pem server.pem client.pem
rm -f ca.srl
openssl verify -CAfile ca.pem server.pem client.pem >/dev/null
