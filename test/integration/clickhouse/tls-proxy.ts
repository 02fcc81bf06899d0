// ClickHouse over TLS for tests, as a managed service offers it: an https server with a
// self-signed certificate (made by openssl) that forwards every request to the harness's
// ClickHouse HTTP port. The client must be told to trust the certificate.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Transform } from 'node:stream'

/** A running proxy. */
export interface TlsProxy {
  /** the https URL to give a client (the target's user and password kept) */
  url: string
  /** the certificate (PEM), to trust */
  cert: string
  /** the file holding it, for NODE_EXTRA_CA_CERTS */
  certFile: string
  /** answers whose client closed the connection before the answer's end */
  dropped(): number
  close(): Promise<void>
}

/**
 * Starts an https proxy on 127.0.0.1 in front of ClickHouse at `target`; its files go in `dir`.
 * With `bytesPerSecond` answers are passed on no faster than that: answers asked for at once are
 * then read at once, whatever the order ClickHouse finishes them in.
 */
export async function startTlsProxy(
  target: string,
  dir: string,
  bytesPerSecond = Number.POSITIVE_INFINITY,
): Promise<TlsProxy> {
  const keyFile = join(dir, 'key.pem')
  const certFile = join(dir, 'cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  )
  const cert = readFileSync(certFile, 'utf8')
  const to = new URL(target)
  const upstream = new http.Agent({ keepAlive: true })
  let dropped = 0
  const server = https.createServer({ cert, key: readFileSync(keyFile) }, (req, res) => {
    const up = http.request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
        agent: upstream,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        if (bytesPerSecond === Number.POSITIVE_INFINITY) return void answer.pipe(res)
        answer
          .pipe(
            new Transform({
              transform(chunk: Buffer, _enc, done) {
                setTimeout(() => done(null, chunk), (chunk.length / bytesPerSecond) * 1000)
              },
            }),
          )
          .pipe(res)
      },
    )
    up.on('error', () => res.destroy())
    // a client that stops reading stops the read from ClickHouse too
    res.on('close', () => {
      if (res.writableFinished) return
      dropped++
      up.destroy()
    })
    req.pipe(up)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = new URL(target)
  url.protocol = 'https:'
  url.hostname = 'localhost'
  url.port = String((server.address() as AddressInfo).port)
  return {
    url: url.toString().replace(/\/$/, ''),
    cert,
    certFile,
    dropped: () => dropped,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      upstream.destroy()
    },
  }
}
