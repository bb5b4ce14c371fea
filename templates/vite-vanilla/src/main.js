import { setupCounter } from './counter.js'

setupCounter(document.querySelector('#counter'))
