"""Tape layouts compared: one list per taped value (what s2s-ad generates), one
shared list with one push per value, one shared list with a tuple per
iteration; 200 iterations, two values per iteration.

    python benchmarks/tape_layout.py
"""
import timeit
def per_value(n=200):
    a_t = []; b_t = []
    a = b = 0.5
    for i in range(n):
        a_t.append(a); b_t.append(b)
        a = a * 0.9 + b; b = b * 0.8
    s = 0.0
    for i in range(n):
        b = b_t.pop(); a = a_t.pop()
        s += a * b
    return s
def shared(n=200):
    t = []
    a = b = 0.5
    for i in range(n):
        t.append(a); t.append(b)
        a = a * 0.9 + b; b = b * 0.8
    s = 0.0
    for i in range(n):
        b = t.pop(); a = t.pop()
        s += a * b
    return s
def shared_tuple(n=200):
    t = []
    a = b = 0.5
    for i in range(n):
        t.append((a, b))
        a = a * 0.9 + b; b = b * 0.8
    s = 0.0
    for i in range(n):
        a, b = t.pop()
        s += a * b
    return s

if __name__ == "__main__":
    for f in (per_value, shared, shared_tuple) * 3:
        print(f.__name__, round(min(timeit.repeat(f, number=2000, repeat=7)) / 2000 * 1e6, 1), "µs")
