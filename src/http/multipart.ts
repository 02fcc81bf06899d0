import { Busboy } from '@fastify/busboy'
import type { FastifyInstance } from 'fastify'
import { PayloadTooLarge, ValidationError } from './errors.ts'

// multipart/form-data bodies (browser forms and file uploads, as PostHog's cohort CSV upload
// sends them) read into a plain object: each field as its text, each file as its text (UTF-8),
// so the route's zod schema validates them like a JSON body. Only in the scope it is added to.

export interface MultipartLimits {
  /** the largest file, in bytes */
  maxFileBytes: number
  /** the most files and fields */
  maxParts?: number
}

export function acceptMultipart(scope: FastifyInstance, limits: MultipartLimits): void {
  scope.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    let finished = false
    const finish = (err: Error | null, body?: Record<string, unknown>) => {
      if (finished) return
      finished = true
      done(err, body)
    }
    let bb: ReturnType<typeof Busboy>
    try {
      bb = Busboy({
        headers: req.headers as { 'content-type': string },
        limits: { fileSize: limits.maxFileBytes, files: 5, parts: limits.maxParts ?? 100 },
      })
    } catch {
      return finish(new ValidationError('The multipart body could not be read.', null, 'parse_error'))
    }
    const body: Record<string, unknown> = {}
    const files: Promise<void>[] = []
    bb.on('field', (name: string, value: string) => {
      body[name] = value
    })
    bb.on('file', (name: string, stream: NodeJS.ReadableStream & { truncated?: boolean }) => {
      const chunks: Buffer[] = []
      files.push(
        new Promise<void>((resolve, reject) => {
          stream.on('data', (c: Buffer) => chunks.push(c))
          stream.on('limit', () => reject(new PayloadTooLarge(limits.maxFileBytes)))
          stream.on('error', reject)
          stream.on('end', () => {
            body[name] = Buffer.concat(chunks).toString('utf8')
            resolve()
          })
        }),
      )
    })
    bb.on('error', () =>
      finish(new ValidationError('The multipart body could not be read.', null, 'parse_error')),
    )
    bb.on('finish', () => {
      Promise.all(files).then(
        () => finish(null, body),
        (err: Error) => finish(err),
      )
    })
    payload.pipe(bb)
  })
}
