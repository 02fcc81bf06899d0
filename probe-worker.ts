import { parentPort } from 'node:worker_threads'; const x: number = 1; parentPort!.postMessage('hi from ts ' + x)
