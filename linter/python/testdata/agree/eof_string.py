x = """abc
def
