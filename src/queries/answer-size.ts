// The JSON size of each computed query response's rows (as read from ClickHouse): a large one is
// not serialized for the results cache or a query status (they keep 900 KB at most, and
// JSON.stringify of a 40 MB answer held the event loop), and the route streams it
// (src/http/json-stream.ts).
const answerSizes = new WeakMap<object, number>()

/** Bytes of JSON the response's rows were read from; undefined for a cached or small response. */
export const answerBytesOf = (response: object): number | undefined => answerSizes.get(response)

export const setAnswerBytes = (response: object, bytes: number): void => void answerSizes.set(response, bytes)
