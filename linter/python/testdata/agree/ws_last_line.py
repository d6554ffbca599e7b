if True:
    x = 1
   