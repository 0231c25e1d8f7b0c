// Express 4 and Koa 2 are installed under npm aliases for the adapter tests; their API
// is, for what the tests use, the one the current majors' types describe.
declare module 'express4' {
  import express from 'express'
  export default express
}
declare module 'koa2' {
  import Koa from 'koa'
  export default Koa
}
