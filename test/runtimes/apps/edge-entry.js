// What Vercel's Edge does with a route handler module: the fetch event calls its GET.
import { GET } from './route.js'

addEventListener('fetch', (event) => {
  event.respondWith(GET(event.request))
})
