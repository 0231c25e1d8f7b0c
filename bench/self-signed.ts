/**
 * A throwaway certificate for the benchmark's https introspection endpoint, made at run
 * time with the `openssl` command (Node can make keys but not certificates): self-signed
 * for 127.0.0.1, valid for a day, so that it serves as its own CA bundle.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

/** Where the certificate and its key were written. */
export interface SelfSigned {
  readonly certFile: string
  readonly keyFile: string
}

/** Writes `cert.pem` and `key.pem` (an EC P-256 key) into `dir`. */
export function makeSelfSigned(dir: string): SelfSigned {
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile], // prettier-ignore
    { stdio: 'ignore' },
  )
  return { certFile, keyFile }
}
