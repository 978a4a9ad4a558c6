#!/usr/bin/env bash
# start-mail.sh — a throw-away REAL mail server on 127.0.0.1 for perfbot's integration tests.
#
#   Dovecot 2.3 (Debian 12 package): IMAP  127.0.0.1:$IMAP_PORT  (plain + STARTTLS)
#                                    IMAPS 127.0.0.1:$IMAPS_PORT (implicit TLS)
#                                    LMTP  127.0.0.1:$LMTP_PORT  (local delivery)
#                                    Submission 127.0.0.1:$SUBMISSION_PORT (SMTP AUTH PLAIN/LOGIN,
#                                       STARTTLS offered, relays to Postfix below)
#                                    Submissions 127.0.0.1:$SUBMISSIONS_PORT (same, implicit TLS)
#   Postfix 3.7 (Debian 12 package), private instance (own config + queue under $MAIL_TEST_DIR):
#                                    SMTP 127.0.0.1:$SMTP_PORT (no auth, STARTTLS offered),
#                                    accepts mail for known users @$MAIL_DOMAIN (550 for others),
#                                    hands it to Dovecot LMTP; never relays anywhere else.
#
# So: mail sent via SMTP (either port) to a test user appears in that user's IMAP INBOX.
# TLS: throw-away CA in $MAIL_TEST_DIR/ca.pem signs the server cert (localhost, 127.0.0.1);
# clients must trust ca.pem explicitly (or disable verification).
#
# Test users (password = "secret" unless MAIL_TEST_PASSWORD is set):
#   bot@example.test  alice@example.test  bob@example.test  list@example.test
#
# Must run as root (CI here runs as root): both daemons drop privileges themselves.
# (OpenSMTPD was tried first: on Debian 12 with OpenSSL 3 its STARTTLS fails.)
# Stop with stop-mail.sh (same env).  Idempotent-ish: it stops a previous instance first.
set -euo pipefail

DIR=${MAIL_TEST_DIR:-/tmp/mailtest}
SMTP_PORT=${SMTP_PORT:-2525}
SUBMISSION_PORT=${SUBMISSION_PORT:-1587}
SUBMISSIONS_PORT=${SUBMISSIONS_PORT:-1465}
IMAP_PORT=${IMAP_PORT:-1143}
IMAPS_PORT=${IMAPS_PORT:-1993}
LMTP_PORT=${LMTP_PORT:-2424}
MAIL_DOMAIN=${MAIL_DOMAIN:-example.test}
PASS=${MAIL_TEST_PASSWORD:-secret}
USERS=${MAIL_TEST_USERS:-"bot alice bob list"}

t0=$(date +%s.%N)

if [ "$(id -u)" != 0 ]; then echo "start-mail.sh: must run as root" >&2; exit 1; fi

# 1. install (no-op when present; ~25 s incl. apt-get update on a fresh Debian 12 machine)
if ! command -v dovecot >/dev/null || ! command -v postfix >/dev/null \
   || [ ! -x /usr/lib/dovecot/lmtp ] || [ ! -x /usr/lib/dovecot/submission ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends \
    dovecot-imapd dovecot-lmtpd dovecot-submissiond postfix openssl >/dev/null
fi

# 2. stop an earlier instance, lay out a fresh directory
"$(dirname "$0")/stop-mail.sh" >/dev/null 2>&1 || true
rm -rf "$DIR"
mkdir -p "$DIR/run" "$DIR/state" "$DIR/mail" "$DIR/postfix" "$DIR/postfix-spool" "$DIR/postfix-data"
chmod 755 "$DIR" "$DIR/run"
chown mail:mail "$DIR/mail"
chown postfix "$DIR/postfix-data"

# 3. throw-away CA + server cert (EC P-256: fast to make). Clients trust $DIR/ca.pem.
#    A separate leaf (CA:FALSE) matters for rustls/webpki, which rejects a CA:TRUE
#    self-signed cert presented as the server cert (CaUsedAsEndEntity).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
  -subj "/CN=mailtest test CA" -keyout "$DIR/ca.key" -out "$DIR/ca.pem" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj "/CN=localhost" -keyout "$DIR/key.pem" -out "$DIR/server.csr" 2>/dev/null
printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
  "extendedKeyUsage=serverAuth" "subjectAltName=DNS:localhost,IP:127.0.0.1" > "$DIR/server.ext"
openssl x509 -req -in "$DIR/server.csr" -CA "$DIR/ca.pem" -CAkey "$DIR/ca.key" -CAcreateserial \
  -days 3650 -extfile "$DIR/server.ext" -out "$DIR/cert.pem" 2>/dev/null
chmod 600 "$DIR/key.pem" "$DIR/ca.key"

# 4. users: Dovecot passwd-file + Postfix virtual_mailbox_maps
: > "$DIR/users"; : > "$DIR/vusers"
for u in $USERS; do
  echo "$u@$MAIL_DOMAIN:{PLAIN}$PASS" >> "$DIR/users"
  echo "$u@$MAIL_DOMAIN OK" >> "$DIR/vusers"
done
# One more IMAP user, whose IDLE gets Dovecot's keep-alive line (`* OK Still
# here`) every second instead of every 2 minutes: for a test that an IDLE ends
# on time even so.
echo "chatty@$MAIL_DOMAIN:{PLAIN}$PASS::::::userdb_imap_idle_notify_interval=1s" >> "$DIR/users"
chmod 644 "$DIR/users" "$DIR/vusers"

DH=""
[ -f /usr/share/dovecot/dh.pem ] && DH="ssl_dh = </usr/share/dovecot/dh.pem"

# 5. Dovecot config (standalone: does NOT include /etc/dovecot/conf.d)
cat > "$DIR/dovecot.conf" <<EOF
instance_name = mailtest
base_dir = $DIR/run/
state_dir = $DIR/state
log_path = $DIR/dovecot.log
protocols = imap lmtp submission
listen = 127.0.0.1
hostname = localhost
postmaster_address = postmaster@$MAIL_DOMAIN

ssl = yes
ssl_cert = <$DIR/cert.pem
ssl_key = <$DIR/key.pem
$DH
# tests on loopback: allow LOGIN / AUTH PLAIN without TLS
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_username_format = %Lu

passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $DIR/users
}
userdb {
  driver = static
  args = uid=mail gid=mail home=$DIR/mail/%d/%n
}
first_valid_uid = 8
first_valid_gid = 8
mail_location = maildir:~/Maildir
mail_fsync = never
# IDLE's news comes from inotify on the maildir. Where inotify does not work
# (some container filesystems) Dovecot looks at the mailbox only every
# mailbox_idle_check_interval (30 s by default): 1 s keeps its push prompt.
mailbox_idle_check_interval = 1 secs

namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    special_use = \Sent
    auto = subscribe
  }
  mailbox Trash {
    special_use = \Trash
    auto = subscribe
  }
}

service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $IMAP_PORT
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $IMAPS_PORT
    ssl = yes
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = $LMTP_PORT
  }
}
service submission-login {
  inet_listener submission {
    address = 127.0.0.1
    port = $SUBMISSION_PORT
  }
  inet_listener submissions {
    address = 127.0.0.1
    port = $SUBMISSIONS_PORT
    ssl = yes
  }
}
submission_relay_host = 127.0.0.1
submission_relay_port = $SMTP_PORT
submission_relay_trusted = yes
submission_relay_ssl = no
EOF

# 6. Postfix private instance: main.cf + master.cf (no chroot, only the smtpd listener)
cat > "$DIR/postfix/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $DIR/postfix-spool
data_directory = $DIR/postfix-data
# no syslog here: log to a file (must be under maillog_file_prefixes)
maillog_file = $DIR/postfix.log
maillog_file_prefixes = $DIR
mail_owner = postfix
setgid_group = postdrop
myhostname = localhost
mydomain = localdomain
myorigin = localhost
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.1/32
alias_maps =
alias_database =
local_recipient_maps =
biff = no
smtp_dns_support_level = disabled
# only our test domain, only known users; nothing is ever relayed elsewhere
virtual_mailbox_domains = $MAIL_DOMAIN
virtual_mailbox_maps = texthash:$DIR/vusers
virtual_transport = lmtp:inet:127.0.0.1:$LMTP_PORT
smtpd_relay_restrictions = reject_unauth_destination
default_transport = error:outbound mail disabled in tests
relay_transport = error:outbound mail disabled in tests
smtpd_tls_cert_file = $DIR/cert.pem
smtpd_tls_key_file = $DIR/key.pem
smtpd_tls_security_level = may
EOF
cat > "$DIR/postfix/master.cf" <<EOF
127.0.0.1:$SMTP_PORT inet n - n - - smtpd
pickup     unix n - n 60 1 pickup
cleanup    unix n - n - 0 cleanup
qmgr       unix n - n 300 1 qmgr
tlsmgr     unix - - n 1000? 1 tlsmgr
rewrite    unix - - n - - trivial-rewrite
bounce     unix - - n - 0 bounce
defer      unix - - n - 0 bounce
trace      unix - - n - 0 bounce
verify     unix - - n - 1 verify
flush      unix n - n 1000? 0 flush
proxymap   unix - - n - - proxymap
proxywrite unix - - n - 1 proxymap
smtp       unix - - n - - smtp
relay      unix - - n - - smtp
showq      unix n - n - - showq
error      unix - - n - - error
retry      unix - - n - - error
discard    unix - - n - - discard
lmtp       unix - - n - - lmtp
anvil      unix - - n - 1 anvil
scache     unix - - n - 1 scache
postlog    unix-dgram n - n - 1 postlogd
EOF

# 7. start both (each daemonizes); logs in $DIR/dovecot.log and $DIR/postfix.log
# redirect stdio: otherwise the dovecot master + log process keep the caller's stderr open
# and a caller that pipes this script (`start-mail.sh | tee`) never sees EOF
dovecot -c "$DIR/dovecot.conf" < /dev/null > "$DIR/dovecot.stderr" 2>&1
postfix -c "$DIR/postfix" start < /dev/null > "$DIR/postfix.stderr" 2>&1 \
  || { cat "$DIR/postfix.stderr" "$DIR/postfix.log" >&2; exit 1; }

# 8. wait until every port answers with a greeting
wait_banner() { # port expected-prefix
  for _ in $(seq 1 300); do
    if exec 3<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null; then
      if read -r -t 2 line <&3 && [[ $line == $2* ]]; then exec 3>&-; return 0; fi
      exec 3>&-
    fi
    sleep 0.1
  done
  echo "start-mail.sh: port $1 did not come up" >&2; return 1
}
wait_banner "$IMAP_PORT" "* OK"
wait_banner "$LMTP_PORT" "220"
wait_banner "$SUBMISSION_PORT" "220"
wait_banner "$SMTP_PORT" "220"

t1=$(date +%s.%N)
printf 'mail server up in %.2fs: SMTP %s, submission %s, submissions %s, IMAP %s, IMAPS %s, LMTP %s (dir %s)\n' \
  "$(awk "BEGIN{print $t1 - $t0}")" "$SMTP_PORT" "$SUBMISSION_PORT" "$SUBMISSIONS_PORT" "$IMAP_PORT" "$IMAPS_PORT" "$LMTP_PORT" "$DIR"
