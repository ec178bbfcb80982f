#!/bin/sh
# Fires concurrent purchases at the running flash-sale example, first through the lock, then
# without it, and prints the HTTP statuses and the stock after each round.
# Usage: ./buy-concurrently.sh [base-url] [buyers] [quantity]   (default http://localhost:8080 20 3)
set -eu
BASE=${1:-http://localhost:8080}
BUYERS=${2:-20}
QUANTITY=${3:-3}
STOCK=10

round() {
  path=$1
  curl -s -o /dev/null -X POST "$BASE/sale/sku-42/restock?quantity=$STOCK"
  echo "$BUYERS buyers, $QUANTITY each, $STOCK in stock: POST /sale/sku-42/$path"
  i=0
  while [ "$i" -lt "$BUYERS" ]; do
    curl -s -o /dev/null -w '%{http_code}\n' -X POST "$BASE/sale/sku-42/$path?quantity=$QUANTITY" &
    i=$((i + 1))
  done | sort | uniq -c | sed 's/^/  HTTP /'
  wait
  echo "  after: $(curl -s "$BASE/sale/sku-42")"
}

round buy
round buy-unlocked
