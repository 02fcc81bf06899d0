import { createHash } from 'node:crypto'

// PostHog's bucketing hash, identical in posthog/models/feature_flag/flag_matching.py
// (get_hash), rust/feature-flags/src/flags/flag_matching_utils.rs (calculate_hash) and
// @posthog/core's getFeatureFlagHash used by posthog-node local evaluation:
// sha1("<flag key>.<identifier><salt>"), first 15 hex digits as an integer, divided by
// 0xfffffffffffffff. The result lies in [0, 1]. Changing any of this reassigns every user.
const LONG_SCALE = Number(0xfffffffffffffffn)

export const ROLLOUT_SALT = ''
export const VARIANT_SALT = 'variant'

export function flagHash(flagKey: string, identifier: string, salt: string = ROLLOUT_SALT): number {
  const digest = createHash('sha1').update(`${flagKey}.${identifier}${salt}`, 'utf8').digest('hex')
  // 60 bits do not fit a double exactly; BigInt then Number rounds to nearest like Python's
  // float(int) and Rust's `u64 as f64`, so the buckets agree bit for bit.
  return Number(BigInt(`0x${digest.slice(0, 15)}`)) / LONG_SCALE
}

// A user is inside a rollout when the hash does not exceed the percentage as a fraction.
export function inRollout(flagKey: string, identifier: string, rolloutPercentage: number): boolean {
  return flagHash(flagKey, identifier) <= rolloutPercentage / 100
}

export interface VariantRange {
  key: string
  min: number
  max: number
}

// Variants take consecutive slices of [0, 1) in definition order. The running sum is
// accumulated exactly as PostHog does, since float rounding decides the boundaries.
export function variantRanges(
  variants: readonly { key: string; rollout_percentage: number }[],
): VariantRange[] {
  const ranges: VariantRange[] = []
  let min = 0
  for (const variant of variants) {
    const max = min + variant.rollout_percentage / 100
    ranges.push({ key: variant.key, min, max })
    min = max
  }
  return ranges
}

export function pickVariant(
  flagKey: string,
  identifier: string,
  variants: readonly { key: string; rollout_percentage: number }[],
): string | null {
  const hash = flagHash(flagKey, identifier, VARIANT_SALT)
  return variantRanges(variants).find((range) => hash >= range.min && hash < range.max)?.key ?? null
}
