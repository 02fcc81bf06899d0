import { describe, expect, it } from 'vitest'
import { isPublicPath } from '../../../src/http/cors.ts'

describe('which paths are public', () => {
  it('counts the SDK endpoints and nothing that takes a personal key', () => {
    for (const p of [
      '/e',
      '/e/',
      '/i/v0/e/?ver=1',
      '/batch/',
      '/decide/?v=4',
      '/flags?v=2',
      '/array/phc_x/config.js',
    ])
      expect(isPublicPath(p), p).toBe(true)
    for (const p of [
      '/flags/definitions?token=x',
      '/api/projects/',
      '/api/feature_flag/local_evaluation',
      '/engagement',
      '/_health',
    ])
      expect(isPublicPath(p), p).toBe(false)
  })
})
