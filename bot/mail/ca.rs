//! A private CA to trust besides the public roots (`smtp.ca_file`,
//! `imap.ca_file`): read and checked when the config is, so that a file
//! holding no usable certificate is named then, with the file, instead of
//! failing later as a TLS error at the first connection.

use std::path::Path;

use rustls::pki_types::{pem::PemObject, CertificateDer};
use rustls::RootCertStore;

/// The certificates of the PEM file at `path`, each one that rustls can
/// trust. The error says what is wrong with the file, for a message that
/// names the setting and the path.
pub fn read(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| e.to_string())?;
    parse(&pem)
}

fn parse(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let mut certs = Vec::new();
    for (n, c) in CertificateDer::pem_slice_iter(pem).enumerate() {
        let c = c.map_err(|e| format!("certificate {}: {}", n + 1, pem_error(&e)))?;
        // What the TLS client will do with it: a certificate it cannot
        // parse as a trust anchor is refused here, not at the handshake.
        RootCertStore::empty().add(c.clone()).map_err(|e| {
            // rustls words this for a server's certificate ("invalid peer
            // certificate"): here it is the file's.
            let why = match e {
                rustls::Error::InvalidCertificate(e) => format!("not a usable certificate ({e:?})"),
                e => e.to_string(),
            };
            format!("certificate {}: {why}", n + 1)
        })?;
        certs.push(c);
    }
    if certs.is_empty() {
        return Err("no certificate in it (expected PEM: -----BEGIN CERTIFICATE-----)".into());
    }
    Ok(certs)
}

/// The PEM reader's error in words: its own display gives the markers
/// as lists of byte values.
fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::MissingSectionEnd { end_marker } => {
            format!(
                "no \"-----END {}-----\" line",
                String::from_utf8_lossy(end_marker)
            )
        }
        Error::IllegalSectionStart { line } => {
            format!("a bad line: \"{}\"", String::from_utf8_lossy(line))
        }
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed CA certificate (EC P-256), made once with `openssl req
    /// -x509`.
    const CA: &str = "-----BEGIN CERTIFICATE-----
MIIBeDCCAR2gAwIBAgIUKNRIWHSOw4W0yTmfzoqWVIwFP9YwCgYIKoZIzj0EAwIw
ETEPMA0GA1UEAwwGdGVzdENBMB4XDTI2MTIwNTA3MTkyM1oXDTM2MTIwMjA3MTky
M1owETEPMA0GA1UEAwwGdGVzdENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
N7iUqNxXRvrGIFS1McxLCcwS6KRpD8cPNO4IGpzFz4A7OmSVb2PVIIDtHPtn3a+A
hlGfTfLMFmApo9JAD6zbjKNTMFEwHQYDVR0OBBYEFD7wUhgqsxD5ics0TkveqqQ0
175yMB8GA1UdIwQYMBaAFD7wUhgqsxD5ics0TkveqqQ0175yMA8GA1UdEwEB/wQF
MAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAKgszcVvEYA3UQy8jf9rySRiivo9Lir/
DCZAFSTp9IjGAiEAoaTQm9IAXlRo1l2DN0DgevXH55pKcKCGz50s2hDT+tc=
-----END CERTIFICATE-----
";

    fn check(pem: &str, expect: Result<usize, &str>) {
        let got = parse(pem.as_bytes()).map(|c| c.len());
        match (got, expect) {
            (Ok(n), Ok(m)) => assert_eq!(n, m, "{pem}"),
            (Err(e), Err(want)) => assert!(e.contains(want), "{pem}: {e}"),
            (got, expect) => panic!("{pem}: got {got:?}, expected {expect:?}"),
        }
    }

    #[test]
    fn ca_files_are_checked_when_read() {
        let table: &[(&str, Result<usize, &str>)] = &[
            (CA, Ok(1)),
            (&format!("{CA}{CA}"), Ok(2)),
            ("", Err("no certificate in it")),
            ("not a pem file\n", Err("no certificate in it")),
            (
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                Err("no certificate in it"),
            ),
            (
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                Err("certificate 1: not a usable certificate (BadEncoding)"),
            ),
            (
                "-----BEGIN CERTIFICATE-----\nAAAA\n",
                Err("certificate 1: no \"-----END CERTIFICATE-----\" line"),
            ),
            (
                "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
                Err("certificate 1: "),
            ),
        ];
        for (pem, expect) in table {
            check(pem, *expect);
        }
    }
}
