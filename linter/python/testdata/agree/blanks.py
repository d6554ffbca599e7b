#!/usr/bin/env python
# comment

import os



def a():
    pass
def b():
    pass


@property

def c():
    pass


class D:
    x = 1
    def e(self):
        pass


    def f(self):
        def g():
            pass
        def h():
            pass
        return g



    # comment
    y = 2
x = 1


if x:
    def k():
        pass
    x = 2
def one(): pass
def two(): pass


import sys
__all__ = ['a']
__version__: str = '1'
