#!/usr/bin/env bash
# A throw-away SimpleSAMLphp identity provider (Debian's simplesamlphp, on PHP's own web server) for
# the `saml` plugin's tests.
#
#   Tests/saml/simplesamlphp.sh start DIR PORT SP...   write the IdP's config into DIR (a test key
#                                                     and certificate, the people below), trust each
#                                                     SP, serve http://127.0.0.1:PORT/ and wait
#                                                     until its metadata answers
#   Tests/saml/simplesamlphp.sh stop  DIR             stop it (SIGTERM, then SIGKILL); idempotent
#
# Each SP is `ENTITYID|ACS|OPTIONS`, OPTIONS a comma-separated list of:
#   encrypt=CERTFILE   encrypt assertions to CERTFILE (AES-256-GCM, RSA-OAEP) and check the SP's
#                      signed requests with it
#   sign-response      sign the Response as well as the assertion
# The IdP's metadata: http://127.0.0.1:PORT/saml2/idp/metadata.php (entity id the same URL), its
# certificate DIR/cert/idp.crt. It asserts a persistent NameID (the uid), and the attributes uid,
# mail, displayName and groups.
#
# People (username / password):
#   alice / alice-pass   mail alice@corp.test, displayName "Alice Liddell", groups staff, engineers
#   bob   / bob-pass     mail bob@corp.test, displayName "Bob Builder", groups contractors
#
# Needs the Debian packages simplesamlphp, php-cli, php-xml, php-mbstring and openssl.
set -euo pipefail
. "$(dirname "$0")/../lib/live_process.sh"

command="${1:-}"
dir="${2:-}"
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR PORT SP... | stop DIR" >&2; exit 2; }

stop() {
  local pid
  pid="$(cat "$dir/php.pid" 2>/dev/null || true)"
  if live_process "$pid"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do live_process "$pid" || break; sleep 0.1; done
    live_process "$pid" && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/php.pid"
}

case "$command" in
stop)
  stop
  exit 0
  ;;
start) ;;
*)
  echo "usage: $0 start DIR PORT SP... | stop DIR" >&2
  exit 2
  ;;
esac

port="${3:?the port}"
shift 3
base="http://127.0.0.1:$port/"
www=/usr/share/simplesamlphp/www
[ -d "$www" ] || { echo "simplesamlphp is not installed (apt-get install simplesamlphp php-cli php-xml php-mbstring)" >&2; exit 1; }
stop
mkdir -p "$dir/config" "$dir/metadata" "$dir/cert" "$dir/data" "$dir/tmp" "$dir/log" "$dir/sessions"
if [ ! -s "$dir/cert/idp.key" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj "/CN=SimpleSAMLphp test IdP" \
    -keyout "$dir/cert/idp.key" -out "$dir/cert/idp.crt" >/dev/null 2>&1
fi

cat >"$dir/config/config.php" <<PHP
<?php
require '/etc/simplesamlphp/config.php';
\$config['baseurlpath'] = '$base';
\$config['certdir'] = '$dir/cert/';
\$config['loggingdir'] = '$dir/log/';
\$config['datadir'] = '$dir/data/';
\$config['tempdir'] = '$dir/tmp';
\$config['metadatadir'] = '$dir/metadata/';
\$config['metadata.sources'] = [['type' => 'flatfile', 'directory' => '$dir/metadata']];
\$config['secretsalt'] = 'gatehouse-test-salt-$(basename "$dir")';
\$config['auth.adminpassword'] = 'gatehouse-test-admin';
\$config['technicalcontact_email'] = 'tests@corp.test';
\$config['timezone'] = 'UTC';
\$config['enable.saml20-idp'] = true;
\$config['module.enable'] = ['exampleauth' => true, 'core' => true, 'saml' => true, 'admin' => true];
\$config['logging.handler'] = 'file';
\$config['logging.level'] = SimpleSAML\Logger::INFO;
\$config['store.type'] = 'phpsession';
\$config['session.cookie.secure'] = false;
// Chromium drops a SameSite=None cookie that is not Secure (this IdP serves plain http on loopback).
\$config['session.cookie.samesite'] = 'Lax';
\$config['session.phpsession.savepath'] = '$dir/sessions';
\$config['language.available'] = ['en'];
\$config['debug'] = ['saml' => false, 'backtraces' => true, 'validatexml' => false];
PHP

cat >"$dir/config/authsources.php" <<'PHP'
<?php
$config = [
    'admin' => ['core:AdminPassword'],
    'people' => [
        'exampleauth:UserPass',
        'alice:alice-pass' => [
            'uid' => ['alice'], 'mail' => ['alice@corp.test'], 'displayName' => ['Alice Liddell'], 'groups' => ['staff', 'engineers'],
        ],
        'bob:bob-pass' => [
            'uid' => ['bob'], 'mail' => ['bob@corp.test'], 'displayName' => ['Bob Builder'], 'groups' => ['contractors'],
        ],
    ],
];
PHP

cat >"$dir/metadata/saml20-idp-hosted.php" <<PHP
<?php
\$metadata['__DYNAMIC:1__'] = [
    'host' => '__DEFAULT__',
    'privatekey' => 'idp.key',
    'certificate' => 'idp.crt',
    'auth' => 'people',
    'SingleSignOnServiceBinding' => ['urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'],
    'signature.algorithm' => 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    'attributes.NameFormat' => 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
    'authproc' => [
        10 => ['class' => 'saml:AttributeNameID', 'attribute' => 'uid', 'Format' => 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'],
    ],
];
PHP

{
  echo '<?php'
  for sp in "$@"; do
    IFS='|' read -r entity acs options <<<"$sp"
    echo "\$metadata['$entity'] = ["
    echo "    'AssertionConsumerService' => [['Binding' => 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', 'Location' => '$acs']],"
    echo "    'NameIDFormat' => 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',"
    echo "    'attributes' => ['uid', 'mail', 'displayName', 'groups'],"
    IFS=',' read -ra flags <<<"$options"
    for flag in "${flags[@]}"; do
      case "$flag" in
      encrypt=*)
        cert="${flag#encrypt=}"
        body="$(sed -e '/-----/d' "$cert" | tr -d '\n')"
        echo "    'assertion.encryption' => true,"
        echo "    'sharedkey_algorithm' => 'http://www.w3.org/2009/xmlenc11#aes256-gcm',"
        echo "    'validate.authnrequest' => true,"
        echo "    'certData' => '$body',"
        ;;
      sign-response) echo "    'saml20.sign.response' => true," ;;
      '') ;;
      *) echo "unknown SP option $flag" >&2; exit 2 ;;
      esac
    done
    echo "    'saml20.sign.assertion' => true,"
    echo "];"
  done
} >"$dir/metadata/saml20-sp-remote.php"

SIMPLESAMLPHP_CONFIG_DIR="$dir/config" setsid php -d "session.save_path=$dir/sessions" -d display_errors=0 -d log_errors=1 \
  -d "error_log=$dir/log/php-errors.log" -S "127.0.0.1:$port" -t "$www" >"$dir/log/php-server.log" 2>&1 </dev/null &
echo $! >"$dir/php.pid"
for _ in $(seq 1 100); do
  if curl -fs -o /dev/null "${base}saml2/idp/metadata.php"; then
    echo "SimpleSAMLphp IdP at ${base}saml2/idp/metadata.php"
    exit 0
  fi
  live_process "$(cat "$dir/php.pid")" || break
  sleep 0.1
done
echo "SimpleSAMLphp did not start; see $dir/log" >&2
tail -20 "$dir/log/php-server.log" "$dir/log/php-errors.log" 2>/dev/null >&2 || true
stop
exit 1
