"""`synthgen plan`: what a generate run will cost before it starts."""
