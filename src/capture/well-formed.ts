// Ill-formed UTF-16 in what a client sends, replaced as PostHog's capture does it
// (rust/capture/src/passes/invalid_surrogates.rs): every lone surrogate, high or low, becomes U+FFFD;
// a high surrogate followed by a low one is a character and stays. So `"\ud800"`, `"\udfff"` and
// `"\ufffd"` are one distinct id, as in PostHog, and `"\ud800\ud800"` (two replacement characters)
// is another. Done on the JSON text an event is logged as: JSON.stringify writes a lone surrogate
// as a `\udXXX` escape and a pair as its character, so only escapes of the surrogate range need
// looking at, and text without one (nearly all) is given back untouched after one scan.

const LONE = /\\ud[89a-f][0-9a-f]{2}/
// an escape is one only after an even number of backslashes (`\\ud800` is a backslash, then text)
const LONE_ALL = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g

/** JSON.stringify's output with every lone surrogate replaced by U+FFFD (PostHog's capture rule). */
export function wellFormedJson(json: string): string {
  return LONE.test(json) ? json.replace(LONE_ALL, '$1\\ufffd') : json
}
