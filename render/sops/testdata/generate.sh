#!/usr/bin/env bash
# Re-creates the encrypted fixtures of render/sops (and of the render and
# reconciler tests that read them) with the sops CLI, as an operator
# writes them. Needs bin/sops (`make test-env`). Run from anywhere:
#   render/sops/testdata/generate.sh
set -euo pipefail
cd "$(dirname "$0")"
sops="${SOPS:-$(cd ../../.. && pwd)/bin/sops}"
[ -x "$sops" ] || { echo "generate.sh: $sops missing: run make test-env" >&2; exit 1; }
export SOPS_DISABLE_VERSION_CHECK=1
pub() { sed -n 's/^# public key: //p' "$1"; }
main=$(pub age.key)
other=$(pub other.key)
secret_regex='^(data|stringData)$'

# A Secret as Flux users keep it: data and stringData encrypted.
"$sops" encrypt --age "$main" --encrypted-regex "$secret_regex" \
  --filename-override secret.yaml plain/secret.yaml > secret.enc.yaml
# The same Secret for a key the tests do not hold.
"$sops" encrypt --age "$other" --encrypted-regex "$secret_regex" \
  --filename-override secret.yaml plain/secret.yaml > wrongkey.enc.yaml
# JSON, to both keys.
"$sops" encrypt --age "$main,$other" --filename-override config.json plain/config.json > config.enc.json
# Tampered: an unencrypted field changed after encryption (the MAC covers it).
sed 's/^    name: db$/    name: db-tampered/' secret.enc.yaml > tampered.enc.yaml
grep -q 'name: db-tampered' tampered.enc.yaml

# Plaintexts as `sops decrypt` prints them, for the golden comparisons.
SOPS_AGE_KEY_FILE=age.key "$sops" decrypt secret.enc.yaml > secret.dec.yaml
SOPS_AGE_KEY_FILE=age.key "$sops" decrypt config.enc.json > config.dec.json
echo "generate.sh: fixtures re-created with $("$sops" --version --disable-version-check | head -n1)"
