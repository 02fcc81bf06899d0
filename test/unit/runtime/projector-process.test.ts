import { describe, expect, it } from 'vitest'
import { projectorNodeFlags } from '../../../src/runtime/projector-process.ts'

describe('projectorNodeFlags', () => {
  it('gives the projector process a 1 GiB old generation, and the parent flags after it', () => {
    expect(projectorNodeFlags([], '')).toEqual(['--max-old-space-size=1024'])
    expect(projectorNodeFlags(['--cpu-prof', '--cpu-prof-dir=/tmp/p'])).toEqual([
      '--max-old-space-size=1024',
      '--cpu-prof',
      '--cpu-prof-dir=/tmp/p',
    ])
  })

  it('leaves the limit to the user who set it, on the command line or in NODE_OPTIONS', () => {
    expect(projectorNodeFlags(['--max-old-space-size=4096'])).toEqual(['--max-old-space-size=4096'])
    expect(projectorNodeFlags(['--max_old_space_size=300'])).toEqual(['--max_old_space_size=300'])
    expect(projectorNodeFlags([], '--inspect  --max-old-space-size=2048')).toEqual([])
  })
})
